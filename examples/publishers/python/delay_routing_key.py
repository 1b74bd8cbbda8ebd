"""The routing key that delays a message in a delay queue set (standard library only)."""


def delay_routing_key(key: str, delay_ms: int, levels: int, resolution_ms: int, radix: int = 2) -> str:
    """key, then the delay in ticks of resolution_ms, rounded up, as exactly levels
    digits in base radix (the set's radix: 2, 4, 8, 16 or 256), each a decimal word:
    delay_routing_key("orders", 5000, 4, 1000) == "orders.0.1.0.1",
    delay_routing_key("orders", 37000, 2, 1000, radix=16) == "orders.2.5"."""
    if radix not in (2, 4, 8, 16, 256):
        raise ValueError(f"radix {radix} is not 2, 4, 8, 16 or 256")
    ticks = -(-delay_ms // resolution_ms)  # ceiling division in integers
    if delay_ms < 0 or ticks >= radix**levels:
        raise ValueError(f"delay {delay_ms}ms does not fit {levels} levels of {resolution_ms}ms in radix {radix}")
    digits = [str(ticks // radix**position % radix) for position in range(levels - 1, -1, -1)]
    return ".".join(([key] if key else []) + digits)
