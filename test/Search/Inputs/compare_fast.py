"""Compares a distir-search CSV written with --fast to one without.

usage: compare_fast.py FULL.csv FAST.csv [--memory-tolerance REL]

Every configuration must have the same status; for those simulated (ok or
oom), the latencies must agree to 1e-9 (relative) and the peak and resident
memory, and the peak's split by kind, to REL (default 0: equal). Prints one summary line; exits 1 on any
difference, listing the first ones.
"""
import csv
import sys


def key(row):
    return tuple(row.get(k, '') for k in ('batch', 'dp', 'tp', 'pp',
                                          'stage_tp', 'microbatches',
                                          'schedule', 'mapping', 'zero',
                                          'recompute'))


def main():
    args = sys.argv[1:]
    tolerance = 0.0
    if '--memory-tolerance' in args:
        i = args.index('--memory-tolerance')
        tolerance = float(args[i + 1])
        del args[i:i + 2]
    full = {key(r): r for r in csv.DictReader(open(args[0]))}
    fast = {key(r): r for r in csv.DictReader(open(args[1]))}
    if full.keys() != fast.keys():
        print('different configurations')
        return 1
    problems = []
    worst_latency = worst_memory = 0.0
    simulated = 0
    for k, a in full.items():
        b = fast[k]
        if a['status'] != b['status']:
            problems.append(f'{k}: status {a["status"]} vs {b["status"]}')
            continue
        if a['status'] not in ('ok', 'oom'):
            continue
        simulated += 1
        la, lb = float(a['latency_s']), float(b['latency_s'])
        rel = abs(la - lb) / max(abs(la), 1e-30)
        worst_latency = max(worst_latency, rel)
        if rel > 1e-9:
            problems.append(f'{k}: latency {la} vs {lb}')
        # The peak device's split by kind too, where the CSV has it.
        columns = ['peak_bytes', 'resident_bytes'] + [
            c for c in ('peak_weights', 'peak_gradients', 'peak_activations',
                        'peak_inputs', 'peak_communication',
                        'peak_optimizer_state') if c in a]
        for column in columns:
            ma, mb = int(a[column]), int(b[column])
            rel = abs(ma - mb) / max(ma, 1)
            worst_memory = max(worst_memory, rel)
            if rel > tolerance:
                problems.append(f'{k}: {column} {ma} vs {mb}')
    print(f'{len(full)} configurations, {simulated} simulated, '
          f'{len(problems)} differ; worst relative difference: latency '
          f'{worst_latency:.1e}, memory {worst_memory:.1e}')
    for p in problems[:10]:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
