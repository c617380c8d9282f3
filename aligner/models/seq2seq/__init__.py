"""The text seq2seq family (G2P, NMT): a BiGRU encoder and a GRU decoder with Bahdanau or
Luong attention from the core, and the typed ``model:`` section of its recipes."""
