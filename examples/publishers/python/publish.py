"""Publishes one persistent message with a delay to a delay queue set (Debian's python3-pika)."""
import os

import pika

from delay_routing_key import delay_routing_key

env = os.environ
routing_key = delay_routing_key(env["DELAY_KEY"], int(env["DELAY_MS"]), int(env["DELAY_LEVELS"]),
                                int(env["DELAY_RESOLUTION_MS"]), int(env["DELAY_RADIX"]))
connection = pika.BlockingConnection(pika.URLParameters(env["RABBITMQ_AMQP_URL"]))
channel = connection.channel()
channel.confirm_delivery()  # basic_publish now raises if the broker refuses the message
channel.basic_publish(exchange=env["DELAY_EXCHANGE"], routing_key=routing_key, body=env["DELAY_BODY"].encode(),
                      properties=pika.BasicProperties(delivery_mode=2))  # persistent
connection.close()
