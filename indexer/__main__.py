from indexer.cli import cli

cli()
