#!/usr/bin/env python3
"""Reads every manifest file given and prints one line per object:

    <kind>\t<group>\t<namespace>\t<name>\t<file>

while checking what neither kubernetes-validate nor kubectl reports:
- the YAML parses, with no duplicate mapping keys (PyYAML and kubectl both silently keep the last one);
- every document is empty or an object with apiVersion, kind and metadata.name;
- no two objects share kind, group, namespace and name (the second would silently win on apply);
- no file holds no object at all.

Errors go to stderr and make the exit status 1. Needs PyYAML (the kubernetes-validate venv has it).
"""

import sys

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that rejects duplicate keys in a mapping."""


def construct_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"found duplicate key {key!r} (first at line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)


def main(paths):
    errors = []
    seen = {}
    rows = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                docs = list(yaml.load_all(f, Loader=UniqueKeyLoader))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            errors.append(f"{path}: {e}")
            continue
        count = 0
        for index, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            where = f"{path} (document {index})"
            if not isinstance(doc, dict):
                errors.append(f"{where}: not a mapping")
                continue
            api_version, kind = doc.get("apiVersion"), doc.get("kind")
            metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
            name = metadata.get("name")
            if not isinstance(api_version, str) or not isinstance(kind, str) or not isinstance(name, str):
                errors.append(f"{where}: needs apiVersion, kind and metadata.name")
                continue
            if kind.endswith("List"):
                errors.append(f"{where}: {kind} objects are not allowed; list the items as documents")
                continue
            group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
            namespace = metadata.get("namespace") or ""
            key = (kind, group, namespace, name)
            count += 1
            if key in seen:
                errors.append(f"{where}: {kind} {namespace + '/' if namespace else ''}{name} "
                              f"is also defined in {seen[key]}")
                continue
            seen[key] = where
            rows.append("\t".join((kind, group, namespace, name, path)))
        if count == 0:
            errors.append(f"{path}: no Kubernetes object in this file")
    for row in rows:
        print(row)
    for error in errors:
        print(f"ERROR {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
