"""Evaluation runs in the app: gold items against the served bundle, stored with what they ran on."""
