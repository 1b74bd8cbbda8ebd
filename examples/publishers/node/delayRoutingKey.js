// The routing key that delays a message in a delay queue set (no dependencies).

// key, then the delay in ticks of resolutionMs, rounded up, as exactly levels
// binary digits: delayRoutingKey("orders", 5000, 4, 1000) === "orders.0.1.0.1".
function delayRoutingKey(key, delayMs, levels, resolutionMs) {
  const ticks = BigInt(Math.ceil(delayMs / resolutionMs)); // exact for whole milliseconds below 2^53
  if (delayMs < 0 || ticks >> BigInt(levels) !== 0n) {
    throw new RangeError(`delay ${delayMs}ms does not fit ${levels} levels of ${resolutionMs}ms`);
  }
  const digits = [];
  for (let bit = levels - 1; bit >= 0; bit--) digits.push(String((ticks >> BigInt(bit)) & 1n));
  return (key ? [key, ...digits] : digits).join(".");
}

module.exports = { delayRoutingKey };

if (require.main === module) {
  // node delayRoutingKey.js KEY DELAY_MS LEVELS RESOLUTION_MS [KEY DELAY_MS LEVELS RESOLUTION_MS ...]
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i += 4) {
    console.log(delayRoutingKey(args[i], Number(args[i + 1]), Number(args[i + 2]), Number(args[i + 3])));
  }
}
