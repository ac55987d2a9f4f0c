"""The gateway's HTTP routes, one router per resource."""
