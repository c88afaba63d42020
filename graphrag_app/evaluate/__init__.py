"""Evaluate's room: conditions judged head to head, the experiment's result, and people judging
blind (pages/evaluate.py lays it out).

It imports the shared layer and the engine, never another page's package.
"""
