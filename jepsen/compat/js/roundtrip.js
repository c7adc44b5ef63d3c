// roundtrip.js drives kafkajs for jepsen/compat's Go tests (kafkajs_test.go):
// one step of the round trip per run, its answer as JSON on stdout, kafkajs'
// own logs on stderr. Bytes travel as base64 strings, null as null, so the
// Go side can tell a null key or value from an empty one.
//
//   node roundtrip.js create   <broker> <topic> <partitions>
//   node roundtrip.js produce  <broker> <topic> <plan.json>
//   node roundtrip.js consume  <broker> <topic> <count>
//   node roundtrip.js group    <broker> <topic> <count>
//   node roundtrip.js offsets  <broker> <topic>
//   node roundtrip.js acls     <broker> -
//
// consume reads by partition without a consumer group: kafkajs' public
// consumer always joins a group, so it uses kafkajs' own cluster and broker
// objects (the ones its consumer fetches through) to send Fetch requests.
// group reads with the public consumer.run, for brokers that serve groups.
'use strict'

const { Kafka, CompressionTypes, Partitioners, logLevel } = require('kafkajs')

// Bounds, so that a broker that stops answering fails the step instead of
// hanging it; the Go side also kills the process after its own timeout.
const stepTimeoutMs = 50000
const fetchWaitMs = 100
const fetchBytesMax = 10 << 20
const partitionFetchBytesMax = 2 << 20

const codecs = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
}

function main() {
  const [command, broker, topic, argument] = process.argv.slice(2)
  const kafka = new Kafka({
    clientId: 'sluice-compat-kafkajs',
    brokers: [broker],
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, log }) => {
      process.stderr.write(`kafkajs ${namespace} ${level}: ${log.message} ${JSON.stringify(log)}\n`)
    },
    retry: { retries: 5 },
  })
  const steps = { create, produce, consume, group, offsets, acls }
  if (!(command in steps)) {
    throw new Error(`unknown command ${command}; want one of ${Object.keys(steps).join(', ')}`)
  }
  const timeout = new Promise((_, reject) => {
    setTimeout(() => reject(new Error(`${command} took more than ${stepTimeoutMs} ms`)), stepTimeoutMs).unref()
  })
  return Promise.race([steps[command](kafka, topic, argument), timeout]).then(
    answer =>
      // Exit only once the answer is written: stdout to a pipe is
      // asynchronous in node, and exit would cut it short.
      new Promise(resolve => process.stdout.write(JSON.stringify(answer) + '\n', resolve))
  )
}

// create makes the topic and answers its metadata as kafkajs sees it.
async function create(kafka, topic, partitions) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: Number(partitions), replicationFactor: 1 }],
      waitForLeaders: true,
    })
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
    return { created, metadata }
  } finally {
    await admin.disconnect()
  }
}

// produce sends the plan's records in order, one send per run of records
// sharing a codec, with an idempotent producer (acks=all, one request in
// flight), and answers what each send reported.
async function produce(kafka, topic, planFile) {
  const plan = JSON.parse(require('fs').readFileSync(planFile, 'utf8'))
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  })
  await producer.connect()
  try {
    const sends = []
    for (let start = 0; start < plan.length; ) {
      let end = start
      while (end < plan.length && plan[end].codec === plan[start].codec) end++
      const codec = plan[start].codec
      if (!(codec in codecs)) throw new Error(`kafkajs has no ${codec} codec built in`)
      const messages = plan.slice(start, end).map(r => ({
        key: decode(r.key),
        value: decode(r.value),
        headers: Object.fromEntries(r.headers.map(h => [h.key, decode(h.value)])),
      }))
      sends.push(await producer.send({ topic, acks: -1, compression: codecs[codec], messages }))
      start = end
    }
    return { sends }
  } finally {
    await producer.disconnect()
  }
}

// consume fetches every partition from offset 0 until count records have
// arrived, through the cluster object kafkajs' consumer uses, asking each
// partition's leader directly: no group, no committed offsets.
async function consume(kafka, topic, count) {
  const createCluster = kafka[Object.getOwnPropertySymbols(kafka).find(s => s.description === 'private:Kafka:createCluster')]
  if (createCluster === undefined) throw new Error('kafkajs internals changed: no createCluster')
  const cluster = createCluster({ allowAutoTopicCreation: false })
  await cluster.connect()
  try {
    await cluster.addTargetTopic(topic)
    await cluster.refreshMetadata()
    const partitions = cluster.findTopicPartitionMetadata(topic)
    const next = new Map(partitions.map(p => [p.partitionId, '0']))
    const records = []
    while (records.length < Number(count)) {
      for (const p of partitions) {
        const broker = await cluster.findBroker({ nodeId: p.leader })
        const answer = await broker.fetch({
          isolationLevel: 0,
          maxWaitTime: fetchWaitMs,
          minBytes: 1,
          maxBytes: fetchBytesMax,
          topics: [{ topic, partitions: [{ partition: p.partitionId, fetchOffset: next.get(p.partitionId), maxBytes: partitionFetchBytesMax }] }],
        })
        for (const response of answer.responses) {
          for (const partition of response.partitions) {
            if (partition.errorCode !== 0) throw new Error(`fetch ${topic}/${partition.partition}: error code ${partition.errorCode}`)
            for (const m of partition.messages) {
              // A batch comes whole, so it can start below the offset asked for.
              if (BigInt(m.offset) < BigInt(next.get(partition.partition))) continue
              records.push(fromMessage(partition.partition, m))
              next.set(partition.partition, (BigInt(m.offset) + 1n).toString())
            }
          }
        }
      }
    }
    return { records }
  } finally {
    await cluster.disconnect()
  }
}

// group reads with kafkajs' public consumer: it joins a consumer group and
// is assigned the partitions, from the earliest offset.
async function group(kafka, topic, count) {
  const consumer = kafka.consumer({ groupId: `sluice-compat-${topic}`, allowAutoTopicCreation: false })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    const records = []
    await new Promise((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            records.push(fromMessage(partition, message))
            if (records.length >= Number(count)) resolve()
          },
        })
        .catch(reject)
    })
    return { records }
  } finally {
    await consumer.disconnect()
  }
}

// offsets answers each partition's earliest (low) and latest (high) offset.
async function offsets(kafka, topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    return { offsets: await admin.fetchTopicOffsets(topic) }
  } finally {
    await admin.disconnect()
  }
}

// acls asks admin.describeAcls for every ACL and answers the error kafkajs
// raised, by its type, or the ACLs if it raised none.
async function acls(kafka) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const described = await admin.describeAcls({
      resourceType: 1, // ANY
      resourcePatternType: 1, // ANY
      operation: 1, // ANY
      permissionType: 1, // ANY
    })
    return { described }
  } catch (e) {
    return { error: { type: e.type || e.name, message: e.message } }
  } finally {
    await admin.disconnect()
  }
}

function fromMessage(partition, m) {
  const headers = []
  for (const [key, value] of Object.entries(m.headers || {})) {
    for (const one of Array.isArray(value) ? value : [value]) headers.push({ key, value: encode(one) })
  }
  return { partition, offset: m.offset, key: encode(m.key), value: encode(m.value), headers }
}

function decode(base64) {
  return base64 === null ? null : Buffer.from(base64, 'base64')
}

function encode(buffer) {
  return buffer === null || buffer === undefined ? null : Buffer.from(buffer).toString('base64')
}

main().then(
  () => process.exit(0),
  error => {
    process.stderr.write(`roundtrip.js: ${error && error.stack ? error.stack : error}\n`)
    process.exit(1)
  }
)
