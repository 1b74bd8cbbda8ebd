variable "name" {
  description = "The delay set's name: the prefix of its exchanges and queues (`<name>.ingest`, `<name>.level.00`, …)."
  type        = string
}

variable "vhost" {
  description = "The vhost the set lives in; the routes' queues and exchanges must be in it."
  type        = string
  default     = "/"
}

variable "max_delay" {
  description = "The longest wait a retry may ask for, as a duration such as \"1h\"."
  type        = string
  default     = "1h"
}

variable "resolution" {
  description = "The tick every wait is rounded up to, as a duration of whole milliseconds."
  type        = string
  default     = "1s"
}

variable "radix" {
  description = "The base publishers write waits in: 2, 4, 8, 16 or 256. A larger radix means fewer hops per message and more queues."
  type        = number
  default     = 2
}

variable "queue_type" {
  description = "The type of the set's TTL queues: \"quorum\" (replicated; at-least-once dead-lettering) or \"classic\"."
  type        = string
  default     = "quorum"
}

variable "retries" {
  description = <<-EOT
    The retry routes, one per consumer: a message that failed is published again to the set's ingest
    exchange with the route's key and its wait, and comes back to `destination` (a queue, or with
    `destination_type = "exchange"` an exchange) once the wait is over. Keys must be unique.
  EOT
  type = list(object({
    key              = string
    destination      = string
    destination_type = optional(string, "queue")
  }))

  validation {
    condition     = length(var.retries) > 0
    error_message = "Give at least one retry route: a set without routes parks every message."
  }
  validation {
    condition     = length(distinct([for r in var.retries : r.key])) == length(var.retries)
    error_message = "Each retry route needs a key of its own: two routes with one key deliver every retry twice."
  }
  validation {
    condition     = alltrue([for r in var.retries : r.key != "" && !can(regex("[#*]", r.key))])
    error_message = "A retry route's key is a message key without wildcards (# or *), and not empty."
  }
}
