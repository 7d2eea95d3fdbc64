"""Linguistic stress tests (IDIAL): the eleven phenomena and the perturbations made of them."""
