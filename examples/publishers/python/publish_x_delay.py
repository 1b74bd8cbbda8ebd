"""Publishes one persistent message to a delayed exchange with the x-delay header (Debian's python3-pika).

As the delayed-message-exchange plugin's publishers do: pika sends a Python int as an AMQP int (a long past
32 bits). X_DELAY_TYPE=string sends the text instead; an empty X_DELAY sends no header.
"""
import os

import pika

env = os.environ
headers = {}
if env.get("X_DELAY"):
    headers["x-delay"] = env["X_DELAY"] if env.get("X_DELAY_TYPE") == "string" else int(env["X_DELAY"])
connection = pika.BlockingConnection(pika.URLParameters(env["RABBITMQ_AMQP_URL"]))
channel = connection.channel()
channel.confirm_delivery()  # basic_publish now raises if the broker refuses the message
channel.basic_publish(exchange=env["DELAY_EXCHANGE"], routing_key=env["DELAY_KEY"], body=env["DELAY_BODY"].encode(),
                      properties=pika.BasicProperties(delivery_mode=2, headers=headers))  # persistent
connection.close()
