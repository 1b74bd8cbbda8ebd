# The URL-escaped vhost, "/" and the name; or "retries@/".
import {
  to = rabbitmq_delayed_exchange.retries
  id = "%2F/retries"
}
