"""Offsets of handled messages are committed together, never past a message not handled, and
only for partitions the consumer still owns."""

from __future__ import annotations

from aiokafka import TopicPartition
from aiokafka.errors import CommitFailedError

from shared.adapters.kafka.commits import BatchedCommits

TOPIC = "context.compressed"


class Consumer:
    def __init__(self, owned: set[int], fail: int = 0) -> None:
        self.owned = {TopicPartition(TOPIC, p) for p in owned}
        self.commits: list[dict[TopicPartition, int]] = []
        self.fail = fail

    def assignment(self) -> set[TopicPartition]:
        return set(self.owned)

    async def commit(self, offsets: dict[TopicPartition, int] | None = None) -> None:
        if self.fail:
            self.fail -= 1
            raise CommitFailedError("the group rebalanced")
        self.commits.append(dict(offsets or {}))


async def test_handled_messages_are_committed_in_one_request_at_the_next_message_to_read() -> None:
    consumer = Consumer(owned={0, 1})
    commits = BatchedCommits("verifier", interval_s=0.5)
    for partition, offset in ((0, 7), (0, 8), (1, 3), (0, 9)):
        await commits.handled(consumer, TOPIC, partition, offset)
    assert consumer.commits == []  # nothing until the interval's flush

    await commits.flush()
    await commits.flush()

    assert consumer.commits == [{TopicPartition(TOPIC, 0): 10, TopicPartition(TOPIC, 1): 4}]


async def test_a_partition_given_up_is_left_to_its_new_owner() -> None:
    consumer = Consumer(owned={0, 1})
    commits = BatchedCommits("verifier", interval_s=0.5)
    await commits.handled(consumer, TOPIC, 0, 7)
    await commits.handled(consumer, TOPIC, 1, 3)
    consumer.owned.discard(TopicPartition(TOPIC, 1))

    await commits.flush()

    assert consumer.commits == [{TopicPartition(TOPIC, 0): 8}]


async def test_a_failed_commit_is_tried_again_without_going_back() -> None:
    consumer = Consumer(owned={0}, fail=1)
    commits = BatchedCommits("verifier", interval_s=0.5)
    await commits.handled(consumer, TOPIC, 0, 7)
    await commits.flush()  # refused
    await commits.handled(consumer, TOPIC, 0, 8)

    await commits.flush()

    assert consumer.commits == [{TopicPartition(TOPIC, 0): 9}]


async def test_without_an_interval_and_once_stopping_each_message_is_committed_at_once() -> None:
    consumer = Consumer(owned={0})
    at_once = BatchedCommits("indexer", interval_s=0)
    await at_once.handled(consumer, TOPIC, 0, 1)
    batched = BatchedCommits("verifier", interval_s=0.5)
    batched.stopping()
    await batched.handled(consumer, TOPIC, 0, 2)

    assert consumer.commits == [{TopicPartition(TOPIC, 0): 2}, {TopicPartition(TOPIC, 0): 3}]
