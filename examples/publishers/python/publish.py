"""Publishes one message with a 10-second delay (pip install pika, or Debian's python3-pika)."""
import pika

from delay_routing_key import delay_routing_key

# The levels, resolution and radix outputs of the quick start's set.
LEVELS, RESOLUTION_MS, RADIX = 12, 1000, 2

connection = pika.BlockingConnection(pika.URLParameters("amqp://guest:guest@127.0.0.1:5672/"))
channel = connection.channel()
channel.confirm_delivery()  # basic_publish now raises if the broker refuses the message
channel.basic_publish(
    exchange="retries.ingest",
    routing_key=delay_routing_key("orders", 10_000, LEVELS, RESOLUTION_MS, RADIX),
    body=b"order 42",
    properties=pika.BasicProperties(delivery_mode=2),  # persistent
)
connection.close()
