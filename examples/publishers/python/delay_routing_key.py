"""The routing key that delays a message in a delay queue set (standard library only)."""
import sys


def delay_routing_key(key: str, delay_ms: int, levels: int, resolution_ms: int) -> str:
    """key, then the delay in ticks of resolution_ms, rounded up, as exactly
    levels binary digits: delay_routing_key("orders", 5000, 4, 1000) == "orders.0.1.0.1"."""
    ticks = -(-delay_ms // resolution_ms)  # ceiling division in integers
    if delay_ms < 0 or ticks >> levels:
        raise ValueError(f"delay {delay_ms}ms does not fit {levels} levels of {resolution_ms}ms")
    digits = [str(ticks >> bit & 1) for bit in range(levels - 1, -1, -1)]
    return ".".join(([key] if key else []) + digits)


if __name__ == "__main__":
    # python3 delay_routing_key.py KEY DELAY_MS LEVELS RESOLUTION_MS [KEY DELAY_MS LEVELS RESOLUTION_MS ...]
    args = sys.argv[1:]
    for i in range(0, len(args), 4):
        print(delay_routing_key(args[i], int(args[i + 1]), int(args[i + 2]), int(args[i + 3])))
