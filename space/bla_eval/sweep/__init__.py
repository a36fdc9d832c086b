"""``bla-eval sweep``: a plan of models x benchmarks x protocols run as ordinary run folders on
an existing engine (local processes, Ray, Slurm through submitit), then its leaderboards."""
