#!/usr/bin/env python3
"""Groups the heap a heaptrack profile still held at its end by what holds it.

    heaptrack_print -f heap.zst -F leaks.folded --flamegraph-cost-type leaked
    python3 benches/heap_profile_summary.py leaks.folded

A stack (leaf last) is judged by its three innermost frames outside the allocator. Strings are counted
where they were first allocated: while the watch event was parsed (they move into the record).
"""
import re
import sys

ALLOCATOR = re.compile(r"alloc::alloc|raw_vec|RawVec|_RNv|__rust|malloc|^0x|boxed::Box")

# (group, pattern on the innermost frames), tried in order.
GROUPS = [
    ("store: hash table", r"reserve_rehash;[^;]*HashMap[^;]*insert;[^;]*apply_watcher_event"),
    ("store: keys (name, namespace, resourceVersion, uid)", r"to_object_ref"),
    ("store: entries (Arc<Lenient>)", r"^[^;]*apply_watcher_event"),
    ("index by controller", r"owner_index|OwnerIndex"),
    ("event recorder cache", r"events::Recorder"),
    ("labels and annotations (BTreeMap nodes)", r"btree::"),
    ("record: lists (conditions, containers, statuses, owner references)", r"VecVisitor"),
    ("record: the struct (Arc<PodRecord>)", r"^[^;]*WatchEvent<K>>::deserialize::__Seed"),
    ("record: strings (moved from the parsed event)", r"ContentDeserializer|deserialize_string"),
    ("HTTP connections and buffers", r"hyper|h2::|rustls|BytesMut|tokio_util::codec|mpsc::chan"),
]


def readable(frame):
    frame = re.sub(r"::h[0-9a-f]{16}$", "", frame)
    for a, b in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$C$", ","), ("..", "::")):
        frame = frame.replace(a, b)
    return frame


def group_of(stack):
    frames = [readable(f) for f in stack.split(";")]
    inner = [f for f in frames if f and not ALLOCATOR.search(f)][-3:]
    innermost = ";".join(reversed(inner))
    for name, pattern in GROUPS:
        if re.search(pattern, innermost):
            return name
    return "other"


def main(path):
    totals = {}
    for line in open(path):
        stack, _, cost = line.rstrip().rpartition(" ")
        group = group_of(stack)
        totals[group] = totals.get(group, 0) + int(cost)
    total = sum(totals.values())
    for name, cost in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{cost / 1e6:8.2f} MB  {100 * cost / total:5.1f} %  {name}")
    print(f"{total / 1e6:8.2f} MB  total held")


if __name__ == "__main__":
    main(sys.argv[1])
