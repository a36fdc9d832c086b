"""The BLA metric: formulas (plain NumPy), published reference numbers, the evaluate module."""
