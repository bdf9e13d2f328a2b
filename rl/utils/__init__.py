"""Helpers every layer above needs: files and run directories, logging, checkpoints, seeding,
the compiler choice, videos, command-line flags, and the one module that touches other
libraries' private APIs (`private_apis`)."""
