"""The bottom of Triton AIOS: what every process shares and nothing else.

`messages` holds the wire protocol's models (every body a process sends or receives),
`errors` the error tree with its stable codes, `strings` the sentences people read for
those codes (one table per language, `locale/<language>.json`), `tools` the atomic
tools' declared facts (names, descriptions, argument schemas, risk). It imports no
other package of ours; every other package may import it.
"""
