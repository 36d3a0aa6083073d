"""Writes a function with one dist.all_reduce over devices 0..N-1 (N from
argv) of tensor<64xf32>, for tests that need groups too large to type."""
import sys

n = int(sys.argv[1])
types = ", ".join(f"!t{i}" for i in range(n))
for i in range(n):
    print(f"!t{i} = tensor<64xf32, #dist.device<{i}>>")
print("func.func @f(" + ", ".join(f"%a{i}: !t{i}" for i in range(n)) +
      f") -> ({types}) {{")
print(f"  %r:{n} = dist.all_reduce sum " +
      ", ".join(f"%a{i}" for i in range(n)) + f" : {types}")
print("  return " + ", ".join(f"%r#{i}" for i in range(n)) + f" : {types}")
print("}")
