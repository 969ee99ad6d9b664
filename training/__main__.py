from training.cli import cli

cli()
