#!/usr/bin/env python3
"""Figures of GPX and TCX files counted with Python's own XML parser (xml.etree), independent
of the vault's importer: for GPX the creator, the first track's type, the track points with a
time and a position, and those with a heart rate or cadence (Garmin's TrackPointExtension); for
TCX per activity its sport and start, its laps and their summed time, distance and calories, and
its track points with a time, a position, a heart rate. One JSON document on stdout.

    python3 scripts/track-oracle.py Tests/Fixtures/tracks > Tests/Fixtures/tracks/oracle.json
"""
import datetime
import json
import os
import sys
import xml.etree.ElementTree as ET


def local(tag):
    return tag.rsplit("}", 1)[-1]


def children(element, name):
    return [c for c in element if local(c.tag) == name]


def find(element, *names):
    for name in names:
        found = [c for c in element if local(c.tag) == name]
        if not found:
            return None
        element = found[0]
    return element


def seconds(text):
    return int(datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp())


def gpx(root):
    points = [p for p in root.iter() if local(p.tag) == "trkpt"]
    timed = [p for p in points if find(p, "time") is not None]
    hr = [p for p in timed if any(local(e.tag) == "hr" for e in p.iter())]
    cad = [p for p in timed if any(local(e.tag) == "cad" for e in p.iter())]
    track = next((t for t in root.iter() if local(t.tag) == "trk"), None)
    kind = find(track, "type") if track is not None else None
    return {"creator": root.get("creator"), "type": kind.text.strip() if kind is not None and kind.text else None,
            "points": len(timed), "withHeartRate": len(hr), "withCadence": len(cad),
            "first": seconds(find(timed[0], "time").text) if timed else None,
            "last": seconds(find(timed[-1], "time").text) if timed else None}


def tcx(root):
    activities = []
    for activity in (a for a in root.iter() if local(a.tag) == "Activity"):
        laps = children(activity, "Lap")
        points = [p for p in activity.iter() if local(p.tag) == "Trackpoint" and find(p, "Time") is not None]

        def total(name):
            values = [float(find(lap, name).text) for lap in laps if find(lap, name) is not None]
            return round(sum(values), 3) if values else None
        identity = find(activity, "Id")
        activities.append({
            "sport": activity.get("Sport"), "start": seconds(identity.text) if identity is not None else None,
            "laps": len(laps), "seconds": total("TotalTimeSeconds"), "meters": total("DistanceMeters"), "calories": total("Calories"),
            "points": len(points),
            "withPosition": len([p for p in points if find(p, "Position", "LatitudeDegrees") is not None]),
            "withHeartRate": len([p for p in points if find(p, "HeartRateBpm", "Value") is not None]),
        })
    return {"activities": activities}


def main():
    result = {"counter": "Python xml.etree", "files": {}}
    for directory in sys.argv[1:]:
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name.lower().endswith(".gpx"):
                result["files"][name] = gpx(ET.parse(path).getroot())
            elif name.lower().endswith(".tcx"):
                result["files"][name] = tcx(ET.parse(path).getroot())
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
