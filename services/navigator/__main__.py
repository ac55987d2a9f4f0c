"""`python -m services.navigator`: run the stage until SIGTERM."""

from shared.adapters.kafka.runner import run_stage_package

if __name__ == "__main__":
    run_stage_package(__package__)
