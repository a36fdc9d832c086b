"""The BibTeX of the BLA paper (EMNLP 2023), for the metric and dataset cards."""

CITATION = r"""@inproceedings{chen-etal-2023-bla,
    title = "The {BLA} Benchmark: Investigating Basic Language Abilities
             of Pre-Trained Multimodal Models",
    author = "Chen, Xinyi and Fern{\'a}ndez, Raquel and Pezzelle, Sandro",
    editor = "Bouamor, Houda and Pino, Juan and Bali, Kalika",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods
                 in Natural Language Processing",
    month = dec,
    year = "2023",
    address = "Singapore",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2023.emnlp-main.356/",
    doi = "10.18653/v1/2023.emnlp-main.356",
    pages = "5817--5830",
}
"""
"""BibTeX of the BLA paper (EMNLP 2023), used by the metric and dataset cards."""
