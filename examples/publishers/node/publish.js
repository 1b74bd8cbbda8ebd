// Publishes one persistent message with a delay to a delay queue set (npm install amqplib).
const amqp = require("amqplib");
const { delayRoutingKey } = require("./delayRoutingKey");

async function main(env) {
  const routingKey = delayRoutingKey(env.DELAY_KEY, Number(env.DELAY_MS), Number(env.DELAY_LEVELS),
    Number(env.DELAY_RESOLUTION_MS), Number(env.DELAY_RADIX));
  const connection = await amqp.connect(env.RABBITMQ_AMQP_URL);
  const channel = await connection.createConfirmChannel();
  channel.publish(env.DELAY_EXCHANGE, routingKey, Buffer.from(env.DELAY_BODY), { persistent: true });
  await channel.waitForConfirms(); // rejects if the broker refused the message
  await connection.close();
}

main(process.env).catch((error) => { console.error(error); process.exit(1); });
