"""One middleware per capability; create_deep_agent orders them."""
