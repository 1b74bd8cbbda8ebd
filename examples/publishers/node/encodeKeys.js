// The encoder test's harness: node encodeKeys.js KEY DELAY_MS LEVELS RESOLUTION_MS RADIX [KEY ...]
// prints one routing key per five arguments (an empty RADIX leaves the default), or "refused: " and why.
const { delayRoutingKey } = require("./delayRoutingKey");

const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 5) {
  const [key, delayMs, levels, resolutionMs, radix] = args.slice(i, i + 5);
  const rest = radix ? [Number(radix)] : [];
  try {
    console.log(delayRoutingKey(key, Number(delayMs), Number(levels), Number(resolutionMs), ...rest));
  } catch (refusal) {
    if (!(refusal instanceof RangeError)) throw refusal;
    console.log(`refused: ${refusal.message}`);
  }
}
