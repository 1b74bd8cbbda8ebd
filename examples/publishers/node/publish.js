// Publishes one message with a 10-second delay (npm install amqplib).
const amqp = require("amqplib");
const { delayRoutingKey } = require("./delayRoutingKey");

const LEVELS = 12, RESOLUTION_MS = 1000; // the levels and resolution outputs of the quick start's set

async function main() {
  const connection = await amqp.connect("amqp://guest:guest@127.0.0.1:5672/");
  const channel = await connection.createConfirmChannel();
  channel.publish("retries.ingest", delayRoutingKey("orders", 10_000, LEVELS, RESOLUTION_MS),
    Buffer.from("order 42"), { persistent: true });
  await channel.waitForConfirms(); // rejects if the broker refused the message
  await connection.close();
}

main();
