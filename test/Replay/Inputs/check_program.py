# Checks that distir-sim's latency on an emitted replay program is within a
# relative tolerance of the replay's own (dist.replayed_latency).
import re
import sys

program, simulation, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
replayed = float(
    re.search(r"dist.replayed_latency = ([0-9.eE+-]+)", open(program).read())[1])
simulated = float(
    re.search(r"^latency: ([0-9.eE+-]+) s", open(simulation).read(), re.M)[1])
error = simulated / replayed - 1
print(f"replayed {replayed:.6f} s, simulated {simulated:.6f} s ({error:+.2%})")
if abs(error) > tolerance:
    sys.exit(f"simulated latency off by {error:+.2%} (tolerance {tolerance:.0%})")
