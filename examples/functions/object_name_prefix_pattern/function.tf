# The permissions of a user that manages every set of team A (team-a.orders, team-a.billing, …), whose
# routes go to team A's queues.
output "team_a_permissions" {
  value = {
    configure = provider::rabbitmq::object_name_prefix_pattern("team-a.")
    write     = "${provider::rabbitmq::object_name_prefix_pattern("team-a.")}|^team-a-"
    read      = provider::rabbitmq::object_name_prefix_pattern("team-a.")
  }
}
