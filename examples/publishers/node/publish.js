// Publishes one message with a 10-second delay (npm install amqplib).
const amqp = require("amqplib");
const { delayRoutingKey } = require("./delayRoutingKey");

// The levels, resolution and radix outputs of the quick start's set.
const LEVELS = 12, RESOLUTION_MS = 1000, RADIX = 2;

async function main() {
  const connection = await amqp.connect("amqp://guest:guest@127.0.0.1:5672/");
  const channel = await connection.createConfirmChannel();
  channel.publish("retries.ingest", delayRoutingKey("orders", 10_000, LEVELS, RESOLUTION_MS, RADIX),
    Buffer.from("order 42"), { persistent: true });
  await channel.waitForConfirms(); // rejects if the broker refused the message
  await connection.close();
}

main();
