from ctxassembly.cli import main

main()
