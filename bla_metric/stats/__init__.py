"""The statistics behind the tables: significance tests, rank sets, the power of the leaderboard,
standard errors of ratios, calibration, prompt sensitivity and image gain."""
