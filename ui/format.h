#pragma once

#include "common/deviceinfo.h"
#include "engine/training.h"

#include <QList>
#include <QString>

namespace tandem::ui {

// "NVIDIA GeForce RTX 4090, 24.0 GB", "Apple M2 (MPS), 16.0 GB", "CPU: AMD EPYC, 8 cores"
QString describeDevice(const DeviceInfo& d);
QString describeDevices(const QList<DeviceInfo>& devices, const QString& separator);
QString formatBytes(double bytes);
// The six-digit pairing code as "123 456", kept left to right inside right-to-left text:
// without the embedding, bidi rules show the two groups of an Arabic screen swapped.
QString pairingCodeText(const QString& code);
// The same, split for a translated sentence with the groups as %3 and %4.
QString pairingCodeFirst(const QString& code);
QString pairingCodeSecond(const QString& code);

// A device ID (the SHA-256 of a machine's certificate, hex) as people compare it at a glance:
// its first eight digits in two groups, "3F2A 91C0"; kept left to right in right-to-left text.
QString shortDeviceId(const QString& id);

// The test figure that says how good a model is at its task, in the user's language: "test
// accuracy 88.12%", "perplexity 3.41", "R² 0.973", or "test loss 0.0312" for a model's own
// loss; "not measured yet" before an evaluation.
QString testFigureText(const TestMetrics& t, Task task);
// A run's speed in its own unit: "195 tokens/s" for a language model (`tokensPerS` > 0), else
// "1,234 samples/s".
QString speedText(double samplesPerS, double tokensPerS);
// The axis title for that figure, and its value in the axis's unit (accuracy in %); NaN where
// the evaluation did not define it.
QString testFigureAxis(Task task);
double testFigureValue(const TestMetrics& t, Task task);

} // namespace tandem::ui
