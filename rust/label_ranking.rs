//! Per-row label-ranking metrics (ranking loss, LRAP, coverage, DCG/NDCG).
