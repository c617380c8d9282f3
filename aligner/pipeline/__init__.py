"""Stages that chain the library's commands for a user: the demo (`aligner demo`), which
prepares a corpus, trains, synthesizes, draws and scores in one go. The floor above
`aligner.inference` and `aligner.train`, below the command line."""
