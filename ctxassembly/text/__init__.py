"""Text analysis the stages share; no stage state, no models.

- :mod:`~ctxassembly.text.lexical`: normalisation, words, shingles, Jaccard, the facts a
  passage states (numbers, dates, negations), BM25 (:class:`~ctxassembly.text.lexical.Lexical`)
  and the names a passage defines.
- :mod:`~ctxassembly.text.injection`: prompt-injection detection in retrieved text.

Import from the module that defines a name; this package re-exports nothing.
"""
