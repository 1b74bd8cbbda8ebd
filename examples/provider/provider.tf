provider "rabbitmq" {
  # Each setting falls back to its RABBITMQ_* environment variable.
  endpoint = "http://127.0.0.1:15672"
  username = "guest"
  password = "guest"
  timeout  = "30s"
}
