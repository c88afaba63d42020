"""What several pages draw: a run's evidence, link tables, run bundles, two answers side by side,
the parts of charts Compare and Sweeps share.

Part of the shared layer: it imports no page package.
"""
