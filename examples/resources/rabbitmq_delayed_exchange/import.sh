# Or 'retries@/': the name, "@", then the vhost as it is.
terraform import rabbitmq_delayed_exchange.retries '%2F/retries'
