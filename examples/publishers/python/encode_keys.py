"""The encoder test's harness: python3 encode_keys.py KEY DELAY_MS LEVELS RESOLUTION_MS RADIX [KEY ...]
prints one routing key per five arguments (an empty RADIX leaves the default), or "refused: " and why."""
import sys

from delay_routing_key import delay_routing_key

args = sys.argv[1:]
for i in range(0, len(args), 5):
    key, delay_ms, levels, resolution_ms, radix = args[i : i + 5]
    extra = {"radix": int(radix)} if radix else {}
    try:
        print(delay_routing_key(key, int(delay_ms), int(levels), int(resolution_ms), **extra))
    except ValueError as refusal:
        print(f"refused: {refusal}")
