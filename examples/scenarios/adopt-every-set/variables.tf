variable "vhost" {
  description = "The vhost whose sets to adopt; null looks in every vhost the user can read."
  type        = string
  default     = "adopt-example"
}
