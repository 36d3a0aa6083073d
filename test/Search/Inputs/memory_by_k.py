"""Checks that a distir-search CSV's peak memory does not grow with K.

usage: memory_by_k.py SEARCH.csv

At a fixed batch, configurations that differ only in the microbatch count K
(same D/T/P, schedule, mapping, ZeRO stage and recompute) must have a peak
that does not rise with K: real pipelines accumulate gradients in place and
hold one microbatch's activations (per stage in flight) instead of the
whole batch's. Prints one line per violation and a summary; exits 1 on any.
"""
import csv
import sys
from collections import defaultdict


def main():
    groups = defaultdict(dict)
    for row in csv.DictReader(open(sys.argv[1])):
        if row['status'] not in ('ok', 'oom'):
            continue
        key = tuple(row.get(k, '') for k in ('batch', 'dp', 'tp', 'pp',
                                              'mapping', 'zero', 'recompute'))
        schedule = row['schedule'] if int(row['microbatches']) > 1 else '*'
        groups[key][(schedule, int(row['microbatches']))] = int(
            row['peak_bytes'])
    violations = 0
    compared = 0
    for key, peaks in sorted(groups.items()):
        schedules = {s for s, _ in peaks if s != '*'} or {'*'}
        for schedule in sorted(schedules):
            # K = 1 has no schedule: it starts every schedule's series.
            series = sorted((k, p) for (s, k), p in peaks.items()
                            if s in (schedule, '*'))
            for (k0, p0), (k1, p1) in zip(series, series[1:]):
                compared += 1
                if p1 > p0:
                    violations += 1
                    print(f'D/T/P {key[1]}/{key[2]}/{key[3]} {key[4]} '
                          f'{schedule}: '
                          f'peak {p0} at K={k0} < {p1} at K={k1}')
    print(f'{compared} steps in K compared, {violations} rise')
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
