// The routing key that delays a message in a delay queue set (no dependencies).

// key, then the delay in ticks of resolutionMs, rounded up, as exactly levels
// digits in base radix (the set's radix: 2, 4, 8, 16 or 256), each a decimal word:
// delayRoutingKey("orders", 5000, 4, 1000) === "orders.0.1.0.1",
// delayRoutingKey("orders", 37000, 2, 1000, 16) === "orders.2.5".
function delayRoutingKey(key, delayMs, levels, resolutionMs, radix = 2) {
  if (![2, 4, 8, 16, 256].includes(radix)) {
    throw new RangeError(`radix ${radix} is not 2, 4, 8, 16 or 256`);
  }
  const ticks = BigInt(Math.ceil(delayMs / resolutionMs)); // exact for whole milliseconds below 2^53
  const base = BigInt(radix);
  if (delayMs < 0 || ticks >= base ** BigInt(levels)) {
    throw new RangeError(`delay ${delayMs}ms does not fit ${levels} levels of ${resolutionMs}ms in radix ${radix}`);
  }
  const digits = [];
  for (let position = levels - 1; position >= 0; position--) {
    digits.push(String((ticks / base ** BigInt(position)) % base));
  }
  return (key ? [key, ...digits] : digits).join(".");
}

module.exports = { delayRoutingKey };
