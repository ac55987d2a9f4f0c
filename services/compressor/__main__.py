"""`python -m services.compressor`: run the compressor stage until SIGTERM."""

from shared.bus.runtime import run_stage

if __name__ == "__main__":
    from services.compressor.main import runtime

    run_stage(runtime)
