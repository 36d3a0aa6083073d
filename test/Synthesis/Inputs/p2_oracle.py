"""An independent enumeration of P² reduction programs, written from the
rules in docs/design/synthesis.md (not from lib/Synthesis), used to derive the
program counts the synthesis tests pin.

  p2_oracle.py [--master-collectives=all] LEVEL:SIZE,... MAX_SIZE [distir-synth JSON]

LEVEL:SIZE,... is the synthesis hierarchy, root first (root:1,node:2,gpu:8).
Prints the number of valid programs of at most MAX_SIZE instructions; with
the JSON of distir-synth for a request whose only matrix has this
hierarchy, also whether both list the same programs.

Model (docs/design/synthesis.md): device ids are row-major over the levels.
An instruction Collective(slice, Form) acts on disjoint groups:
  InsideGroup   devices that share the coordinates of levels 0..slice;
  Parallel(e)   devices that differ only at levels e+1..slice;
  Master(e)     as Parallel(e), only groups whose coordinates below the
                slice are all 0.
The Master form takes AllReduce only (every collective with
--master-collectives=all). Groups of one device do nothing; a slice/form pair whose group set equals an
earlier pair's (order: slice, then InsideGroup, Parallel(e), Master(e)) is not
a new candidate. A device's state holds, per chunk, the set of devices whose
contributions it includes; the rules of each collective are the table of the
design note. A program is a sequence of instructions, each valid and changing
the state, ending at the final state with no earlier prefix final.
"""
import itertools
import json
import sys

COLLECTIVES = ["AllReduce", "ReduceScatter", "AllGather", "Reduce", "Broadcast"]


def groups_of(sizes, slice_, form, e):
    coords = list(itertools.product(*[range(s) for s in sizes]))
    below = range(slice_ + 1, len(sizes))
    groups = {}
    for d, c in enumerate(coords):
        if form == "InsideGroup":
            key = c[:slice_ + 1]
        else:
            if form == "Master" and any(c[j] for j in below):
                continue
            key = c[:e + 1] + tuple(c[j] for j in below)
        groups.setdefault(key, []).append(d)
    return [tuple(g) for g in groups.values() if len(g) >= 2]


def candidates(names, sizes, all_masters):
    seen, result = set(), []
    for slice_ in range(len(sizes)):
        forms = [("InsideGroup", None)]
        forms += [("Parallel", e) for e in range(slice_)]
        forms += [("Master", e) for e in range(slice_)]
        for form, e in forms:
            groups = groups_of(sizes, slice_, form, e)
            key = frozenset(groups)
            if not groups or key in seen:
                continue
            seen.add(key)
            text = form if e is None else f"{form}({names[e]})"
            for coll in COLLECTIVES:
                if form == "Master" and coll != "AllReduce" and not all_masters:
                    continue
                result.append((f"{coll}({names[slice_]}, {text})", coll,
                               groups))
    return result


def held(row):
    return [r for r, bits in enumerate(row) if bits]


def disjoint(sets):
    total = 0
    for s in sets:
        if total & s:
            return False
        total |= s
    return True


def apply(state, coll, groups):
    """The state after `coll` on every group, or None if a group breaks the
    collective's precondition."""
    new = [list(row) for row in state]
    for g in groups:
        rows = [state[d] for d in g]
        chunks = [held(r) for r in rows]
        if coll in ("AllReduce", "ReduceScatter", "Reduce"):
            if not chunks[0] or any(c != chunks[0] for c in chunks):
                return None
            if not all(disjoint([r[c] for r in rows]) for c in chunks[0]):
                return None
            union = {c: 0 for c in chunks[0]}
            for r in rows:
                for c in chunks[0]:
                    union[c] |= r[c]
            if coll == "ReduceScatter" and len(chunks[0]) % len(g):
                return None
            block = len(chunks[0]) // len(g)
            for rank, d in enumerate(g):
                mine = set(chunks[0])
                if coll == "ReduceScatter":
                    mine = set(chunks[0][rank * block:(rank + 1) * block])
                elif coll == "Reduce" and rank:
                    mine = set()
                new[d] = [union[c] if c in mine else 0
                          for c in range(len(state[d]))]
        elif coll == "AllGather":
            if any(not c or len(c) != len(chunks[0]) for c in chunks):
                return None
            if not disjoint([sum(1 << c for c in cs) for cs in chunks]):
                return None
            gathered = [0] * len(state[g[0]])
            for r, cs in zip(rows, chunks):
                for c in cs:
                    gathered[c] = r[c]
            for d in g:
                new[d] = list(gathered)
        else:  # Broadcast from rank 0
            root = rows[0]
            if not held(root):
                return None
            if any(r[c] & ~root[c] for r in rows[1:] for c in range(len(r))):
                return None
            for d in g:
                new[d] = list(root)
    return new


def enumerate_programs(names, sizes, max_size, all_masters):
    k = 1
    for s in sizes:
        k *= s
    cands = candidates(names, sizes, all_masters)
    start = [[1 << d] * k for d in range(k)]
    final = [[(1 << k) - 1] * k for _ in range(k)]
    found = []

    def visit(state, prefix):
        for text, coll, groups in cands:
            nxt = apply(state, coll, groups)
            if nxt is None or nxt == state:
                continue
            if nxt == final:
                found.append(prefix + [text])
            elif len(prefix) + 1 < max_size:
                visit(nxt, prefix + [text])

    visit(start, [])
    return found


def main():
    args = [a for a in sys.argv[1:] if a != "--master-collectives=all"]
    all_masters = len(args) < len(sys.argv) - 1
    levels = [item.split(":") for item in args[0].split(",")]
    names = [n for n, _ in levels]
    sizes = [int(s) for _, s in levels]
    programs = enumerate_programs(names, sizes, int(args[1]), all_masters)
    print(f"oracle: {len(programs)} valid programs")
    if len(args) > 2:
        with open(args[2]) as f:
            (matrix,) = json.load(f)["matrices"]
        tool = [tuple(p["instructions"]) for p in matrix["programs"]]
        mine = [tuple(p) for p in programs]
        print(f"distir-synth: {matrix['num_programs']} valid programs, "
              f"same programs: {sorted(tool) == sorted(mine)}")


if __name__ == "__main__":
    main()
