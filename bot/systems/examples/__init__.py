"""Small example adapters that custom (``type: python``) systems can start from."""
