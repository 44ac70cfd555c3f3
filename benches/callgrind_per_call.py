#!/usr/bin/env python3
"""Instructions per call of a function, from a callgrind profile.

Sums, over every call site of the functions whose name contains PATTERN, the calls and the inclusive
cost callgrind recorded, and prints cost / calls. Used for the `instructions per decision` figures of
benches/README.md:

    valgrind --tool=callgrind --callgrind-out-file=cg.out --collect-atstart=no \
      --toggle-collect='criterion::bencher::Bencher*iter*' \
      target/release/deps/admission-<hash> --bench 'mutate-pod/decide' --profile-time 3
    python3 benches/callgrind_per_call.py cg.out mutate_in_place
"""
import re
import sys


def main(path: str, pattern: str) -> None:
    names: dict[str, str] = {}
    calls = cost = 0
    pending_calls = None
    target_matches = False
    with open(path) as f:
        for line in f:
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                ident, name = m.groups()
                if name:
                    names[ident] = name
                if line.startswith("cfn="):
                    target_matches = pattern in names.get(ident, "")
                continue
            if line.startswith("calls="):
                pending_calls = int(line.split()[0][len("calls="):])
                continue
            if pending_calls is not None:
                if target_matches:
                    calls += pending_calls
                    cost += int(line.split()[1])
                pending_calls = None
    if calls == 0:
        sys.exit(f"no calls of a function matching {pattern!r}")
    print(f"{cost / calls / 1000:.1f}k instructions per call ({cost:,} / {calls:,})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
