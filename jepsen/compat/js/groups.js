// groups.js drives kafkajs consumer groups for jepsen/compat's Go tests
// (groups_kafkajs_test.go); its answer is JSON on stdout, kafkajs' own logs
// go to stderr.
//
//   node groups.js <broker> <topic> <group> <consumers> <records-per-partition>
//
// It starts <consumers> kafkajs consumers in <group>, each with
// consumer.run and eachMessage (kafkajs commits what eachMessage returned
// from after every batch), and waits until the group is stable: every
// consumer has joined, their assignments together cover every partition of
// <topic> once. Only then does a kafkajs producer append
// <records-per-partition> records to each partition (acks=all, in order),
// each valued "<topic>-p<partition>-o<offset>" with a five-digit offset,
// so no record is read before the group is settled. When every record has
// been read, the consumers disconnect (committing and leaving the group)
// and the answer lists each consumer's joins (joinsToSettle of them until
// the group settled: any later one is a rebalance) and reads.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

// Bounds, so that a broker that stops answering fails the run instead of
// hanging it; the Go side also kills the process after its own timeout.
const runTimeoutMs = 50000
// The group settings the Go tests use for every client: the broker's
// lowest session timeout, quick heartbeats so that a rebalance is noticed
// at once.
const sessionTimeoutMs = 6000
const heartbeatIntervalMs = 250
const rebalanceTimeoutMs = 10000
const fetchWaitMs = 100

function main() {
  const [broker, topic, groupId, consumerCount, perPartition] = process.argv.slice(2)
  if (perPartition === undefined) {
    throw new Error('usage: node groups.js <broker> <topic> <group> <consumers> <records-per-partition>')
  }
  const kafka = new Kafka({
    clientId: 'sluice-compat-kafkajs-groups',
    brokers: [broker],
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log }) => {
      process.stderr.write(`kafkajs ${namespace} ${level}: ${log.message} ${JSON.stringify(log)}\n`)
    },
    retry: { retries: 5 },
  })
  const timeout = new Promise((_, reject) => {
    setTimeout(() => reject(new Error(`groups.js took more than ${runTimeoutMs} ms`)), runTimeoutMs).unref()
  })
  return Promise.race([run(kafka, topic, groupId, Number(consumerCount), Number(perPartition)), timeout]).then(
    answer =>
      // Exit only once the answer is written: stdout to a pipe is
      // asynchronous in node, and exit would cut it short.
      new Promise(resolve => process.stdout.write(JSON.stringify(answer) + '\n', resolve))
  )
}

async function run(kafka, topic, groupId, consumerCount, perPartition) {
  const admin = kafka.admin()
  await admin.connect()
  const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.map(p => p.partitionId)
  await admin.disconnect()
  const expected = partitions.length * perPartition

  const consumers = []
  const joins = []
  const reads = []
  let settle, finish
  let joinsToSettle = 0 // joins until the group settled; any later one is a rebalance
  const settled = new Promise(resolve => (settle = resolve))
  const finished = new Promise(resolve => (finish = resolve))
  const latest = new Map() // consumer index -> its last assignment
  for (let index = 0; index < consumerCount; index++) {
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs,
      rebalanceTimeout: rebalanceTimeoutMs,
      maxWaitTimeInMs: fetchWaitMs,
      allowAutoTopicCreation: false,
    })
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const assigned = (payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
      joins.push({ consumer: index, memberId: payload.memberId, leaderId: payload.leaderId, protocol: payload.groupProtocol, partitions: assigned })
      latest.set(index, assigned)
      if (joinsToSettle === 0 && coversOnce(latest, consumerCount, partitions)) {
        joinsToSettle = joins.length
        settle()
      }
    })
    consumers.push(consumer)
  }
  for (const [index, consumer] of consumers.entries()) {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          reads.push({ consumer: index, partition, offset: message.offset, value: message.value === null ? null : message.value.toString() })
          if (reads.length >= expected) finish()
        },
      })
      .catch(error => finish(error))
  }
  await settled
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await producer.connect()
  for (const partition of partitions) {
    const messages = []
    for (let offset = 0; offset < perPartition; offset++) {
      messages.push({ partition, value: `${topic}-p${partition}-o${String(offset).padStart(5, '0')}` })
    }
    await producer.send({ topic, acks: -1, messages })
  }
  await producer.disconnect()
  const error = await finished
  if (error) throw error
  for (const consumer of consumers) await consumer.disconnect()
  return { joins, joinsToSettle, reads }
}

// coversOnce says the consumers' latest assignments hand out every
// partition exactly once, with every consumer holding some.
function coversOnce(latest, consumerCount, partitions) {
  if (latest.size !== consumerCount) return false
  const seen = new Map()
  for (const assigned of latest.values()) {
    if (assigned.length === 0) return false
    for (const p of assigned) seen.set(p, (seen.get(p) || 0) + 1)
  }
  return partitions.every(p => seen.get(p) === 1) && seen.size === partitions.length
}

main().then(
  () => process.exit(0),
  error => {
    process.stderr.write(`groups.js: ${error && error.stack ? error.stack : error}\n`)
    process.exit(1)
  }
)
