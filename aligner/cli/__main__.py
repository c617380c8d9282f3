from aligner.cli import main

main()
