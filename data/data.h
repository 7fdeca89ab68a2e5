// Everything for loading data: datasets (MNIST, CIFAR-10, TensorDataset, TFRecord shards),
// samplers, collation, transforms and the DataLoader, in namespace wick::data.
#pragma once

#include "data/cifar10.h"
#include "data/collate.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/image_decode.h"
#include "data/image_folder.h"
#include "data/lmdb_store.h"
#include "data/loader_timeline.h"
#include "data/mnist.h"
#include "data/records/example_proto.h"
#include "data/records/tfrecord_dataset.h"
#include "data/sampler.h"
#include "data/transforms.h"
